"""The QiuQiu wire protocol: pydantic models for every client and server message.

Filled by the protocol issue; it depends on :mod:`qiuqiu.engine` and nothing else of ours.
"""
