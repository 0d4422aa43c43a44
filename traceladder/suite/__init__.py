"""What a run tests: cases (`suite/cases/`: CaseV1, suite specs, the loader and validator) and domains
(`suite/domain/`: a domain's tools, sandbox and suite)."""
