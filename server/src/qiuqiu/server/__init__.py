"""The QiuQiu server: the I/O shell around the engine (gateway, tables, dealer bot, stores).

Filled by the server issue; it depends on :mod:`qiuqiu.protocol`.
"""
