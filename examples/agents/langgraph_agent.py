"""A LangGraph agent: `traceladder run --agent examples/agents/langgraph_agent.py:run`.

A two-node graph — the model (LangChain's ChatOpenAI with the domain's tool definitions bound),
then the tools, each executed through `case.call_tool` — looping until the model answers.
Needs `pip install langgraph langchain-openai`.
"""

import json

from langchain_core.messages import SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph


def run(case):
    model = ChatOpenAI(
        model=case.model, base_url=case.base_url, api_key=case.api_key or "unused", max_retries=0
    )
    model = model.bind_tools(list(case.tools))

    def think(state):
        return {"messages": [model.invoke([SystemMessage(case.system_prompt), *state["messages"]])]}

    def act(state):
        results = []
        for call in state["messages"][-1].tool_calls:
            content = case.call_tool(call["name"], json.dumps(call["args"], ensure_ascii=False))
            results.append(ToolMessage(content, tool_call_id=call["id"]))
        return {"messages": results}

    graph = StateGraph(MessagesState)
    graph.add_node("think", think)
    graph.add_node("act", act)
    graph.add_edge(START, "think")
    graph.add_conditional_edges("think", lambda s: "act" if s["messages"][-1].tool_calls else END)
    graph.add_edge("act", "think")
    final = graph.compile().invoke({"messages": [("user", case.instruction)]}, {"recursion_limit": 20})
    return final["messages"][-1].content
