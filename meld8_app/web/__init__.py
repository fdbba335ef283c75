"""The browser table (``meld8 play`` / ``view`` / ``review``; ``pip install 'meld8[web]'``).

``tableview`` reduces a seat's protocol events to the state the page draws; ``session`` holds a live
game (the human is one more seat speaking the seat protocol) and a replay's frames; ``review`` compares
a seat's decisions with a reference agent; ``app`` is the Starlette app; ``static/`` the page.
"""
