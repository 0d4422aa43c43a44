// A Node agent for `traceladder run --agent-cmd "node examples/agents/node/agent.mjs"`.
//
// It reads the case as JSON on stdin, asks the model the environment names (OPENAI_BASE_URL,
// OPENAI_MODEL, OPENAI_API_KEY) over plain fetch, executes each tool call by POSTing it to
// TRACELADDER_TOOLS_URL and prints the answer. Its spans go through the OpenTelemetry JS SDK,
// which reads OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_RESOURCE_ATTRIBUTES: traceladder attributes
// them to the case, though the SDK starts a trace of its own.
import { readFileSync } from "node:fs";
import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes, detectResources, envDetector } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

const provider = new BasicTracerProvider({
  resource: detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ "service.name": "node-agent" })),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter())],
});
const tracer = provider.getTracer("node-agent");

async function post(url, body, headers = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

const caseData = JSON.parse(readFileSync(0, "utf8"));
const model = process.env.OPENAI_MODEL;
const messages = [{ role: "system", content: caseData.system_prompt }, ...caseData.messages];
let answer = "";
for (let step = 0; step < 8; step++) {
  const reply = await tracer.startActiveSpan(`chat ${model}`, async (span) => {
    span.setAttribute("gen_ai.operation.name", "chat");
    span.setAttribute("gen_ai.request.model", model);
    try {
      return await post(
        `${process.env.OPENAI_BASE_URL}/chat/completions`,
        { model, messages, tools: caseData.tools },
        { authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
      );
    } finally {
      span.end();
    }
  });
  const message = reply.choices[0].message;
  messages.push(message);
  if (!message.tool_calls || message.tool_calls.length === 0) {
    answer = message.content ?? "";
    break;
  }
  for (const call of message.tool_calls) {
    const { content } = await post(process.env.TRACELADDER_TOOLS_URL, {
      name: call.function.name,
      arguments: call.function.arguments,
    });
    messages.push({ role: "tool", tool_call_id: call.id, content });
  }
}
await provider.shutdown(); // flush: the spans are in the run before the process exits
console.log(answer);
