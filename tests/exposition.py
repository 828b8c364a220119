"""Reading a Prometheus text exposition as a scraper does (prometheus_client's
parser), for the tests of /_metrics."""

from prometheus_client.parser import text_string_to_metric_families


def families(text):
    """{family name: (type, {sample key: value})} of ``text``."""
    return {family.name: (family.type, {
        key(sample.name, **sample.labels): sample.value
        for sample in family.samples})
        for family in text_string_to_metric_families(text)}


def samples(text):
    """{sample key: value} of ``text``, every family together."""
    return {sample: value for _, family in families(text).values()
            for sample, value in family.items()}


def key(name, **labels):
    """The key of sample ``name`` with ``labels`` (in any order)."""
    return name, tuple(sorted(labels.items()))
