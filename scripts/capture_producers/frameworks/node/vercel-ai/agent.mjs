// The Vercel AI SDK agent of the `vercel-ai` producer (frameworks/vercel_ai.py runs it with node).
//
//   node agent.mjs CONFIG_JSON     CONFIG_JSON = {base_url, sink_url, jsonl_path, service_name, system, user, streaming}
//
// generateText / streamText with the three tools of frameworks/__init__.py (zod schemas, the same
// fake results), `stopWhen: stepCountIs(8)`, the `@ai-sdk/openai` provider's chat-completions model
// pointed at the scripted server, `experimental_telemetry: {isEnabled: true, functionId}`. Spans go
// through NodeSDK to two real OTLP/HTTP exporters of the sink: protobuf (`/v1/traces`) and JSON
// (`/json/v1/traces`), and the Collector file format into `jsonl_path`. The BatchSpanProcessors export only on shutdown (one request each). Prints one
// JSON line {final_text, error} on stdout.
import { createOpenAI } from "@ai-sdk/openai";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { appendFileSync } from "node:fs";
import { z } from "zod";

const config = JSON.parse(process.argv[2]);
const batch = (exporter) => new BatchSpanProcessor(exporter, { scheduledDelayMillis: 600000, maxExportBatchSize: 10000, maxQueueSize: 10000 });
// The Collector `file` exporter's format (one OTLP/JSON request a line), written with the SDK's own
// JSON serializer — the one its OTLP/HTTP JSON exporter sends.
const jsonLines = {
  export(spans, done) {
    appendFileSync(config.jsonl_path, Buffer.from(JsonTraceSerializer.serializeRequest(spans)).toString() + "\n");
    done({ code: 0 });
  },
  shutdown: async () => {},
  forceFlush: async () => {},
};
const sdk = new NodeSDK({
  resource: resourceFromAttributes({ "service.name": config.service_name, "service.version": "1.0" }),
  autoDetectResources: false,
  spanProcessors: [
    batch(new ProtoExporter({ url: `${config.sink_url}/v1/traces` })),
    batch(new JsonExporter({ url: `${config.sink_url}/json/v1/traces` })),
    batch(jsonLines),
  ],
  instrumentations: [],
});
sdk.start();

const tools = {
  get_weather: tool({
    description: "Get the current weather for a location.",
    inputSchema: z.object({ location: z.string().describe("City name, e.g. Paris") }),
    execute: async ({ location }) => JSON.stringify({ location, conditions: "sunny", temperature_c: 22 }),
  }),
  get_time: tool({
    description: "Get the current local time in a city.",
    inputSchema: z.object({ city: z.string().describe("The city.") }),
    execute: async ({ city }) => JSON.stringify({ city, local_time: city === "Paris" ? "14:05" : "21:05" }),
  }),
  book_table: tool({
    description: "Book a restaurant table.",
    inputSchema: z.object({
      restaurant: z.string().describe("The restaurant's name."),
      party_size: z.number().int().describe("How many people."),
    }),
    execute: async ({ restaurant, party_size }) =>
      JSON.stringify({ restaurant, party_size, confirmation: "BK-1042" }),
  }),
};

const provider = createOpenAI({ baseURL: config.base_url, apiKey: "sk-fixture-not-a-key" });
const options = {
  model: provider.chat("gpt-4o-mini"),
  system: config.system,
  prompt: config.user,
  tools,
  stopWhen: stepCountIs(8),
  maxRetries: 0,
  experimental_telemetry: { isEnabled: true, functionId: "travel-agent" },
};

let out;
try {
  if (config.streaming) {
    const result = streamText({ ...options, onError: () => {} });
    out = { final_text: await result.text, error: null };
  } else {
    const result = await generateText(options);
    out = { final_text: result.text, error: null };
  }
} catch (error) {
  out = { final_text: null, error: `${error?.name}: ${error?.message}` };
}
await sdk.shutdown();
process.stdout.write(JSON.stringify(out) + "\n");
