"""``/v1/jobs``: jobs run in the API process that accepted them; records let any process answer their polls."""
