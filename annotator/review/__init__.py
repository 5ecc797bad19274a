"""The review logic: queue specs, queues and assignments, decisions, reservations, drafts, adjudication, scoring, suspects, verdicts, users and roles. No Gradio layout here."""
