"""The review app's screens: the Gradio pages and tabs built from the queue specs, panels, views (HTML) and page scripts."""
