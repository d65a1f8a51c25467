"""What one address may take: the accounts it opens, an allowance an hour."""

from __future__ import annotations

from qiuqiu.server.limits import AccountAllowance, network_of


def test_an_address_opens_its_allowance_at_once_and_then_one_more_as_the_hour_refills_it() -> None:
    allowance = AccountAllowance(per_hour=3)
    assert [allowance.take("10.0.0.1") for _ in range(4)] == [True, True, True, False]
    assert allowance.take("10.0.0.2")
    # A quarter of an hour later, a third of the allowance (one account) is back.
    allowance._buckets["10.0.0.1"].stamp -= 20 * 60
    assert [allowance.take("10.0.0.1") for _ in range(2)] == [True, False]


def test_no_cap_allows_every_account_and_remembers_no_address() -> None:
    allowance = AccountAllowance(per_hour=0)
    assert all(allowance.take("10.0.0.1") for _ in range(1000))
    assert not allowance._buckets


def test_addresses_whose_allowance_is_whole_again_are_forgotten_and_the_others_kept() -> None:
    allowance = AccountAllowance(per_hour=2)
    for n in range(AccountAllowance.KEPT):
        assert allowance.take(f"10.0.{n // 256}.{n % 256}")
    for bucket in allowance._buckets.values():
        bucket.stamp -= 3600  # an hour later every allowance is whole again...
    allowance._buckets["10.0.0.0"].tokens = -2  # ...but one spent twice over
    assert allowance.take("192.168.0.1")
    assert set(allowance._buckets) == {"10.0.0.0", "192.168.0.1"}
    assert not allowance.take("10.0.0.0")


def test_an_ipv6_client_is_counted_by_its_64_network_and_an_ipv4_one_by_its_address() -> None:
    assert network_of("2001:db8:1:2:aaaa::1") == network_of("2001:db8:1:2:bbbb::9")
    assert network_of("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert network_of("2001:db8:1:3::1") != network_of("2001:db8:1:2::1")
    assert network_of("::ffff:192.0.2.7") == "192.0.2.7"
    assert network_of("fe80::1%eth0") == "fe80::/64"
    assert network_of("192.0.2.7") == "192.0.2.7"
