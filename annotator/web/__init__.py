"""The web and security layer of the review app: the server, its gate (sessions, logins, origin and size checks), throttles and settings."""
