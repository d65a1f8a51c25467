"""The QiuQiu server: the I/O shell around the engine.

``gateway`` accepts WebSocket connections and runs a ``session`` for each;
sessions speak to the ``lobby`` (accounts, tables) and to each ``table``, which
alone runs hands through the engine and publishes them, made into per-seat
``views``. The ``dealer`` bot plays a seat through the same views, with the
``strategy`` it is named for. Everything that must last goes through a
``store``. Start it with ``qiuqiu-server`` (see ``config`` for the options).
"""
