"""The QiuQiu reference terminal client and bot SDK.

Filled by the client issue; it talks to the server only through :mod:`qiuqiu.protocol`.
"""
