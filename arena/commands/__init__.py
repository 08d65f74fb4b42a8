"""One module per `arena` subcommand; cli.py parses and dispatches."""
