"""pipelines: adapters, Prefect tasks and flows, reports and the CLI. Thin: it never decides a rule."""
