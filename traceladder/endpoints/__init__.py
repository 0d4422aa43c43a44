"""Model endpoints, for the agent and the judge alike: which URL and which key (`resolve`, plain
data, no OpenAI client), and the one cheap request that proves an endpoint usable (`probe`)."""
