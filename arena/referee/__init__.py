"""The referee: from a bot argument on the command line to a running bot process.

``bots`` turns arguments into ``BotSpec``s (and runs their builds); ``process``
starts one bot under trio and exchanges protocol lines with it. No game logic
lives here.
"""
