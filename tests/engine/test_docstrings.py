import doctest

import qiuqiu.engine


def test_the_engine_docstring_examples_hold() -> None:
    result = doctest.testmod(qiuqiu.engine)
    assert result.attempted > 0
    assert result.failed == 0
