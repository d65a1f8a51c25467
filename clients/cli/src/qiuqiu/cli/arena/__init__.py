"""``qiuqiu arena``: bots against bots or the dealer, in one process, at engine speed."""
