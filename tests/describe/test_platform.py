"""SimGrid platform files: units, radicals, the routes of the shipped flat and fat-tree clusters computed by hand, a rank count beyond the hosts, and every bad input refused with the file named."""

from __future__ import annotations

import math

import pytest

from hybridtune.describe.library import PROJECT_ROOT
from hybridtune.describe.platform import (Platform, PlatformError, bandwidth_bytes_per_s,
                                          latency_s, load_platform, radical_ids, speed_flops)

PLATFORMS = PROJECT_ROOT / "tests" / "data" / "platforms"
FAT_TREE = PLATFORMS / "fat-tree-100g.xml"
ETHERNET = PLATFORMS / "ethernet-10g.xml"

CLUSTER = ('<cluster id="c" prefix="n-" suffix=".lan" radical="0-3" speed="1Gf" bw="1GBps" '
           'lat="1us"{extra} />')


def platform_text(cluster: str = CLUSTER.format(extra="")) -> str:
    return ("<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f"  {cluster}\n"
            "</platform>\n")


@pytest.fixture
def platform_file(tmp_path):
    def _file(text: str, name: str = "p.xml"):
        path = tmp_path / name
        path.write_text(text)
        return path
    return _file


@pytest.mark.parametrize("text, expected", [
    ("10GBps", 10e9), ("100Gbps", 12.5e9), ("10Gbps", 1.25e9), ("640Gbps", 80e9),
    ("1kBps", 1e3), ("8kbps", 1e3), ("3MBps", 3e6), ("2TBps", 2e12),
    ("1KiBps", 1024.0), ("2MiBps", 2 * 2.0 ** 20), ("1GiBps", 2.0 ** 30), ("1TiBps", 2.0 ** 40),
    ("8Gibps", 2.0 ** 30), ("125Bps", 125.0), ("125", 125.0), (" 1.5e3MBps ", 1.5e9)])
def test_bandwidth_units_in_bytes_or_bits_per_second(text, expected):
    assert bandwidth_bytes_per_s(text, "here") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("text, expected", [
    ("1us", 1e-6), ("0.3us", 0.3e-6), ("250ns", 250e-9), ("2ms", 2e-3), ("3ps", 3e-12),
    ("1s", 1.0), ("0.5", 0.5), ("1m", 60.0), ("1h", 3600.0), ("1d", 86400.0), ("1w", 604800.0)])
def test_latency_units(text, expected):
    assert latency_s(text, "here") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("text, expected", [
    ("20Gf", 20e9), ("76.8Gf", 76.8e9), ("1.5Gf,1Gf", 1.5e9), ("3Mf", 3e6), ("7f", 7.0),
    ("1Kif", 1024.0), ("2Gif", 2 * 2.0 ** 30), ("1Tf", 1e12)])
def test_speed_units_take_the_first_power_state(text, expected):
    assert speed_flops(text, "here") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("convert, text, hint", [
    (bandwidth_bytes_per_s, "10Gb", "12.5GBps or 100Gbps"),
    (bandwidth_bytes_per_s, "10GHz", "12.5GBps or 100Gbps"),
    (bandwidth_bytes_per_s, "10Xbps", "12.5GBps or 100Gbps"),
    (latency_s, "5usec", "1us or 0.5us"),
    (latency_s, "5Gbps", "1us or 0.5us"),
    (speed_flops, "20GHz", "20Gf"),
    (speed_flops, "20G", "20Gf"),
    (speed_flops, "20", "20Gf")])
def test_a_bad_unit_is_refused_with_where_and_an_example(convert, text, hint):
    with pytest.raises(PlatformError) as info:
        convert(text, "file.xml, line 4, <cluster>")
    message = str(info.value)
    assert message.startswith("file.xml, line 4, <cluster>: ") and repr(text) in message
    assert hint in message


@pytest.mark.parametrize("convert", [bandwidth_bytes_per_s, latency_s, speed_flops])
@pytest.mark.parametrize("text", ["fast", "", "-1us", "1 2us", "us"])
def test_what_is_no_number_is_refused(convert, text):
    with pytest.raises(PlatformError, match="is not a number with a unit") as info:
        convert(text, "where.xml")
    assert str(info.value).startswith("where.xml: ")


@pytest.mark.parametrize("text, ids", [
    ("0-255", list(range(256))), ("0-3,8,10-11", [0, 1, 2, 3, 8, 10, 11]), ("7", [7]),
    (" 2-3 , 5 ", [2, 3, 5]), ("4-4", [4])])
def test_radicals(text, ids):
    assert radical_ids(text, "here") == ids


@pytest.mark.parametrize("text", ["3-1", "a-b", "1-2-3", "", "0-", "-4", "1,,2"])
def test_a_bad_radical_is_refused(text):
    with pytest.raises(PlatformError, match="is not like 0-255") as info:
        radical_ids(text, "where.xml")
    assert str(info.value).startswith("where.xml: ") and repr(text) in str(info.value)


def test_the_fat_tree_read_by_hand():
    platform = load_platform(FAT_TREE)
    assert (platform.name, platform.cluster, platform.topology) == (
        "fat-tree-100g", "fat-tree-100g", "FAT_TREE")
    assert platform.path == str(FAT_TREE)
    assert len(platform.hosts) == 256
    assert platform.hosts[:2] == ("node-0", "node-1") and platform.hosts[-1] == "node-255"
    assert platform.speed_flops == pytest.approx(76.8e9) and platform.cores == 40
    assert platform.latency_s == pytest.approx(0.3e-6)
    assert platform.bandwidth_bytes_per_s == pytest.approx(12.5e9)       # 100 Gb/s
    assert platform.topo_parameters == "2;16,16;1,16;1,1" and platform.levels() == 2
    # furthest hosts: up two levels and down two, four links of 0.3 us, each link 12.5 GB/s
    latency, bandwidth = platform.route()
    assert latency == pytest.approx(4 * 0.3e-6) and bandwidth == pytest.approx(12.5e9)
    # neighbours under one leaf switch: host -> leaf -> host, two links
    latency, bandwidth = platform.route(neighbours=True)
    assert latency == pytest.approx(2 * 0.3e-6) and bandwidth == pytest.approx(12.5e9)


def test_the_flat_ethernet_cluster_read_by_hand():
    platform = load_platform(ETHERNET)
    assert (platform.name, platform.topology, platform.levels()) == ("ethernet-10g", "FLAT", 1)
    assert len(platform.hosts) == 64 and platform.hosts[-1] == "node-63"
    assert platform.cores == 40 and platform.speed_flops == pytest.approx(76.8e9)
    assert platform.backbone_latency_s == pytest.approx(1e-6)
    assert platform.backbone_bandwidth_bytes_per_s == pytest.approx(80e9)   # 640 Gb/s
    # private link, backbone, private link: 5 + 1 + 5 us; the narrowest is the 10 Gb/s link
    for neighbours in (False, True):
        latency, bandwidth = platform.route(neighbours=neighbours)
        assert latency == pytest.approx(11e-6) and bandwidth == pytest.approx(1.25e9)


def test_a_flat_cluster_without_backbone_and_one_inside_a_zone(platform_file):
    cluster = CLUSTER.format(extra="")
    path = platform_file(platform_text(f'<zone id="z" routing="Full">\n    {cluster}\n  </zone>'))
    platform = load_platform(path)
    assert platform.hosts == ("n-0.lan", "n-1.lan", "n-2.lan", "n-3.lan")
    assert platform.cores == 1 and platform.topology == "FLAT"
    assert platform.backbone_bandwidth_bytes_per_s == math.inf
    assert platform.route() == (pytest.approx(2e-6), pytest.approx(1e9))


def test_a_backbone_narrower_than_the_links_limits_the_route(platform_file):
    path = platform_file(platform_text(CLUSTER.format(extra=' bb_bw="100MBps" bb_lat="3us"')))
    assert load_platform(path).route() == (pytest.approx(5e-6), pytest.approx(1e8))


def test_check_ranks_refuses_more_ranks_than_hosts():
    platform = load_platform(FAT_TREE)
    platform.check_ranks(1)
    platform.check_ranks(256)
    with pytest.raises(PlatformError) as info:
        platform.check_ranks(257)
    message = str(info.value)
    assert str(FAT_TREE) in message and "257 ranks" in message and "256 hosts" in message
    with pytest.raises(PlatformError, match="300 ranks asked, the platform has 64 hosts"):
        load_platform(ETHERNET).check_ranks(300)


def test_a_platform_is_plain_data():
    platform = Platform("x.xml", "c", ("a", "b"), 1e9, 1e-6, 1e9)
    assert platform.name == "x" and platform.route() == (2e-6, 1e9)
    with pytest.raises(PlatformError, match="3 ranks asked, the platform has 2 hosts"):
        platform.check_ranks(3)


# ---- bad files: each a PlatformError naming the file ---------------------------------------------

def refused(path) -> str:
    with pytest.raises(PlatformError) as info:
        load_platform(path)
    message = str(info.value)
    assert str(path) in message, message
    return message


@pytest.mark.parametrize("text, line", [
    ("not xml at all\n", 1),
    ("name: fat-tree\nbw: 100Gbps\n", 1),
    ("", 1),
    ('<platform version="4.1">\n  <cluster id="x"\n</platform>\n', 3),
    ('<?xml version="1.0"?>\n<platform version="4.1">\n  <cluster id="x"/>\n  </zone>\n', 4)])
def test_a_file_that_is_not_xml_is_named_with_its_line(platform_file, text, line):
    message = refused(platform_file(text))
    assert f"line {line}: not XML" in message


def test_a_missing_file_is_named(tmp_path):
    message = refused(tmp_path / "absent.xml")
    assert "No such file" in message


def test_the_wrong_root_is_refused(platform_file):
    message = refused(platform_file('<?xml version="1.0"?>\n<zone id="z"/>\n'))
    assert "the root element is <zone>" in message and "<platform" in message


def test_a_platform_without_a_cluster_is_refused(platform_file):
    message = refused(platform_file(platform_text('<host id="h" speed="1Gf"/>')))
    assert "no <cluster> element" in message


@pytest.mark.parametrize("key", ["id", "prefix", "suffix", "radical", "speed", "bw", "lat"])
def test_each_missing_attribute_is_named_with_the_clusters_line(platform_file, key):
    cluster = CLUSTER.format(extra="")
    attribute = next(part for part in cluster.split() if part.startswith(f"{key}="))
    message = refused(platform_file(platform_text(cluster.replace(f" {attribute}", ""))))
    assert f"line 4, <cluster>: attribute {key!r} is missing" in message


@pytest.mark.parametrize("topology", ["TORUS", "DRAGONFLY", "fat_tree"])
def test_an_unknown_topology_is_refused(platform_file, topology):
    message = refused(platform_file(platform_text(CLUSTER.format(
        extra=f' topology="{topology}" topo_parameters="2,2"'))))
    assert f"line 4, <cluster>: topology {topology!r}" in message
    assert "FLAT and FAT_TREE" in message


@pytest.mark.parametrize("extra", ['topology="FAT_TREE"',
                                   'topology="FAT_TREE" topo_parameters="x;2"',
                                   'topology="FAT_TREE" topo_parameters="0;2;1;1"'])
def test_a_fat_tree_needs_its_parameters(platform_file, extra):
    message = refused(platform_file(platform_text(CLUSTER.format(extra=f" {extra}"))))
    assert "'levels;down;up;links'" in message


@pytest.mark.parametrize("attribute, bad, hint", [
    ("bw", "100Gbit", "100Gbps"), ("lat", "5usec", "1us"), ("speed", "76.8GHz", "20Gf"),
    ("bb_bw", "640G", "100Gbps"), ("bb_lat", "1sec", "1us"), ("radical", "0-x", "0-255"),
    ("core", "forty", "core"), ("core", "0", "core")])
def test_a_bad_value_is_refused_with_file_and_line(platform_file, attribute, bad, hint):
    cluster = CLUSTER.format(extra="")
    if f" {attribute}=" in cluster:
        cluster = cluster.replace(next(p for p in cluster.split() if p.startswith(f"{attribute}=")),
                                  f'{attribute}="{bad}"')
    else:
        cluster = CLUSTER.format(extra=f' {attribute}="{bad}"')
    message = refused(platform_file(platform_text(cluster)))
    assert "line 4, <cluster>" in message and repr(bad) in message and hint in message


def test_the_line_named_is_the_clusters_even_after_a_comment_naming_one(platform_file):
    text = platform_text(CLUSTER.format(extra=' bw="1Gbit"').replace(' bw="1GBps"', ""))
    text = text.replace('<platform version="4.1">\n',
                        '<platform version="4.1">\n  <!-- one <cluster> of four hosts -->\n')
    message = refused(platform_file(text))
    assert "line 5, <cluster>" in message


@pytest.mark.parametrize("drop", ["<?xml version='1.0'?>\n",
                                  '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'])
def test_a_platform_without_simgrids_prolog_is_refused_as_simgrid_refuses_it(platform_file, drop):
    message = refused(platform_file(platform_text().replace(drop, "")))
    assert "line 1" in message and "SimGrid needs the prolog" in message
