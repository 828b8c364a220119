# zope.pipeline: the two commands of the README, and the buildout route.
#
#   make serve     serve the sample site (mod_wsgi-express, daemon mode)
#   make test      run the whole test suite with branch coverage
#   make unit      the fast unit layer (tests/unit) only
#   make docs      the Sphinx documentation, warnings as errors
#   make lint      ruff over the whole tree; check-manifest (the sdist
#                  holds what git holds)
#   make dist      the sdist and the wheel in dist/
#   make buildout  the same software through zc.buildout: bin/zope-pipeline,
#                  bin/test
#   make reliability  run the reliability tests and publish their figures
#                  in docs/reliability.md
#   make bench     the benchmark harness of this checkout (benchmarks/, not
#                  installed with the package): python -m benchmarks
#
# Both `serve` and `test` first make sure everything is installed: the apt
# packages (when run as root on Debian), the virtualenv in .venv and the
# package with its extras.  When nothing changed since the last run, that
# check takes well under a second (a stamp file in .venv).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Python the virtualenvs are made from: 3.11 or newer.
PYTHON ?= python3
VENV := .venv
VENV_PYTHON := $(VENV)/bin/python
# compat: the zope.app.* suites of tests/compat (about 60 small packages).
EXTRAS := test,testing,statsd,mysql,modwsgi,docs,bench,compat,debug
# The exact releases tested (the ranges are in pyproject.toml).
CONSTRAINTS := constraints.txt
# Rebuilt when these change: the package's dependencies and this file.
STAMP := $(VENV)/.zope-pipeline-installed

# What the suite and the servers need from Debian: Apache and its headers
# (mod_wsgi is compiled against them), ab and wrk (benchmarks), the MariaDB
# client library (mysqlclient is compiled against it), a compiler, HAProxy
# (the balancer of tests/integration/test_multi_host.py).
APT_PACKAGES := apache2 apache2-dev apache2-utils wrk libmariadb-dev \
	pkg-config build-essential chromium fonts-dejavu-core haproxy
# Added when $(PYTHON) is Debian's own Python (venv and headers are separate
# packages there), and when no MariaDB/MySQL server is running here.
APT_SYSTEM_PYTHON_PACKAGES := python3-venv python3-dev
APT_MYSQL_PACKAGES := mariadb-server mariadb-client
MYSQL_SOCKET := /run/mysqld/mysqld.sock

COVERAGE_MIN := 95
# Extra pytest arguments, e.g. `make test PYTEST_ARGS="-x tests/unit"`.
PYTEST_ARGS ?=
# pytest's JUnit report; `make test` fails when it counts no test at all
# (pytest-cov turns pytest's "no tests ran", exit code 5, into a coverage
# failure, exit code 1).
JUNIT := test-artifacts/junit.xml
# The suites run a second time without zope.pipeline._speedups (the stock
# code of the packages they stand in for), and that run's report.
SPEEDUPS_VARIABLE := ZOPE_PIPELINE_SPEEDUPS
STOCK_TESTS := tests/functional tests/compat
JUNIT_STOCK := test-artifacts/junit-stock.xml
COUNT_TESTS := import sys, xml.etree.ElementTree as ET; \
	suites = [suite for name in sys.argv[1:] \
	          for suite in ET.parse(name).getroot().iter("testsuite")]; \
	count = lambda key: sum(int(suite.get(key, 0)) for suite in suites); \
	print(count("tests"), count("failures") + count("errors"))
SERVE_INI ?= etc/deploy.ini
SERVE_ARGS ?= --mod-wsgi --processes 2

# zc.buildout runs from its own virtualenv; its downloads and eggs stay in
# .buildout/ (ignored by git), its scripts go to bin/.
BUILDOUT_HOME := .buildout
BUILDOUT_VENV := $(BUILDOUT_HOME)/venv

# The integration tests that measure reliability figures; `make test` writes
# them to test-artifacts/reliability.md, `make reliability` publishes them.
RELIABILITY_TESTS := tests/integration/test_conflict_storm.py \
	tests/integration/test_db_outage.py tests/integration/test_db_traffic.py \
	tests/integration/test_memory.py tests/integration/test_multi_host.py \
	tests/integration/test_restart_under_load.py \
	tests/integration/test_slow_requests.py \
	tests/integration/test_two_servers.py
RELIABILITY_REPORT := test-artifacts/reliability.md

.PHONY: lint dist docs unit reliability bench www-data-access help serve test setup apt-packages check-python coverage-summary \
	buildout clean

help:
	@echo 'make serve     serve the sample site (mod_wsgi-express, 2 daemon processes)'
	@echo 'make test      run the whole test suite with branch coverage'
	@echo 'make unit      run the fast unit layer (tests/unit) only'
	@echo 'make docs      build the documentation (docs/_build/html)'
	@echo 'make lint      run ruff (configured in pyproject.toml) and check-manifest'
	@echo 'make dist      build the sdist and the wheel into dist/'
	@echo 'make buildout  build bin/zope-pipeline and bin/test with zc.buildout'
	@echo 'make reliability  run the reliability tests, publish docs/reliability.md'
	@echo 'make bench     run the benchmarks (BENCH_ARGS=--quick for a subset)'
	@echo 'make clean     remove .venv, .buildout and the buildout output (not var/)'

# -- the two commands

serve: setup
	$(VENV)/bin/zope-pipeline serve $(SERVE_INI) $(SERVE_ARGS)

test: setup
	@echo '== pytest over tests/, branch coverage of src/zope/pipeline (fail under $(COVERAGE_MIN)%)'
	@mkdir -p $(dir $(JUNIT)); rm -f $(JUNIT) $(JUNIT_STOCK) .coverage; status=0; \
	$(VENV_PYTHON) -m pytest tests/ -p no:cacheprovider --junitxml=$(JUNIT) \
	    --cov=zope.pipeline --cov-branch --cov-report=term \
	    --cov-fail-under=$(COVERAGE_MIN) $(PYTEST_ARGS) || status=$$?; \
	if [ -z "$(PYTEST_ARGS)" ]; then \
	    echo '== the functional and compat suites again, without zope.pipeline._speedups ($(SPEEDUPS_VARIABLE)=0)'; \
	    $(SPEEDUPS_VARIABLE)=0 $(VENV_PYTHON) -m pytest $(STOCK_TESTS) -q -p no:cacheprovider \
	        --junitxml=$(JUNIT_STOCK) --cov=zope.pipeline --cov-branch --cov-append \
	        --cov-report= || status=$$?; \
	fi; \
	$(MAKE) --no-print-directory coverage-summary; \
	read -r tests failed <<< "$$($(VENV_PYTHON) -c '$(COUNT_TESTS)' $(JUNIT) $$(ls $(JUNIT_STOCK) 2>/dev/null) 2>/dev/null || echo 0 0)"; \
	if [ $$status -eq 5 ] || [ "$$tests" = 0 ]; then \
	    echo 'FAILED: pytest ran no tests (exit code 5).'; \
	    exit 5; \
	elif [ $$status -ne 0 ] && [ "$$failed" = 0 ]; then \
	    echo "FAILED: all $$tests tests passed, but coverage is under $(COVERAGE_MIN)% (pytest exit code $$status)."; \
	elif [ $$status -ne 0 ]; then \
	    echo "FAILED: $$failed of $$tests tests failed or had errors (pytest exit code $$status)."; \
	fi; \
	exit $$status

# pyflakes, pycodestyle, isort and bugbear, as pyproject.toml configures
# them: nothing found, or it fails.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/check-manifest --no-build-isolation

# The source distribution and the wheel, in dist/ (the sdist first, then
# the wheel built from it, as pip would).
dist: setup
	rm -rf dist
	$(VENV_PYTHON) -m build --no-isolation --outdir dist

# The documentation, warnings as errors; the chains it shows are generated
# by show-pipeline while it builds.
docs: setup
	rm -rf docs/_build
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	@echo 'Documentation: docs/_build/html/index.html'

# The fast layer: tests/unit, no servers, no coverage; well under 30 s.
unit: setup
	$(VENV_PYTHON) -m pytest tests/unit -q -p no:cacheprovider $(PYTEST_ARGS)

reliability: setup
	@mkdir -p $(dir $(RELIABILITY_REPORT)); rm -f $(RELIABILITY_REPORT)
	$(VENV_PYTHON) -m pytest -p no:cacheprovider $(RELIABILITY_TESTS) $(PYTEST_ARGS)
	cp $(RELIABILITY_REPORT) docs/reliability.md
	@echo 'docs/reliability.md: the new figures (commit them).'

# The benchmark harness (benchmarks/, a tool of the checkout: the installed
# zope-pipeline command has no bench).  `make bench BENCH_ARGS=--quick`.
BENCH_ARGS ?=
bench: setup
	$(VENV_PYTHON) -m benchmarks $(BENCH_ARGS)

coverage-summary:
	@if [ -f .coverage ]; then \
	    total=$$($(VENV)/bin/coverage report --format=total --precision=2); \
	    echo "Coverage summary: branch coverage of src/zope/pipeline is $$total% (required: $(COVERAGE_MIN)%)."; \
	else \
	    echo 'Coverage summary: no coverage data (.coverage) was written.'; \
	fi

# -- set-up: apt packages, the virtualenv, the package

setup: apt-packages check-python www-data-access $(STAMP)

# Apache runs mod_wsgi's daemon processes as www-data when started as root,
# so www-data must be able to reach the project (and its .venv) and the
# Python the venv was made from (pyenv keeps it under /root): give the
# directories above both the search (x) bit only, and say which changed.
www-data-access:
	@if [ "$$(id -u)" -eq 0 ]; then \
	    base="$$($(PYTHON) -c 'import os, sys; print(os.path.realpath(sys.base_prefix))')"; \
	    for start in "$$(pwd -P)" "$$base"; do \
	        dir="$$start"; \
	        while [ "$$dir" != / ]; do \
	            if [ "$$(( 0$$(stat -c %a "$$dir") & 1 ))" -eq 0 ]; then \
	                chmod o+x "$$dir" && echo "chmod o+x $$dir (so www-data can reach the project and its Python)"; \
	            fi; \
	            dir="$$(dirname "$$dir")"; \
	        done; \
	    done; \
	fi

check-python:
	@if ! $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
	    version=$$($(PYTHON) --version 2>&1 | tail -1) || version='not found'; \
	    echo "zope.pipeline needs Python 3.11 or newer; '$(PYTHON)' is: $$version." >&2; \
	    echo "Run e.g. 'make PYTHON=python3.12 ...'." >&2; \
	    exit 1; \
	fi
	@if [ -x $(VENV_PYTHON) ] && ! $(VENV_PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then \
	    echo "$(VENV) was made with $$($(VENV_PYTHON) --version 2>&1); zope.pipeline needs 3.11 or newer: remove $(VENV) and run make again." >&2; \
	    exit 1; \
	fi

apt-packages:
	@if ! command -v dpkg-query >/dev/null; then \
	    echo 'Not a Debian system: install by hand: $(APT_PACKAGES)'; exit 0; \
	fi; \
	wanted='$(APT_PACKAGES)'; \
	if [ "$$($(PYTHON) -c 'import sys; print(sys.base_prefix)' 2>/dev/null)" = /usr ]; then \
	    wanted="$$wanted $(APT_SYSTEM_PYTHON_PACKAGES)"; \
	fi; \
	if [ ! -S $(MYSQL_SOCKET) ]; then wanted="$$wanted $(APT_MYSQL_PACKAGES)"; fi; \
	missing=''; \
	for package in $$wanted; do \
	    dpkg-query -W -f='$${Status}\n' $$package 2>/dev/null | grep -q '^install ok installed$$' \
	        || missing="$$missing $$package"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
	    echo "Not root, so not installing these apt packages:$$missing."; \
	    echo 'Tests that need them are skipped (and fail under CI=true).'; \
	    exit 0; \
	fi; \
	echo "== apt-get install$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -q; \
	apt-get install -y -q --no-install-recommends $$missing; \
	if [ ! -S $(MYSQL_SOCKET) ] && command -v service >/dev/null; then \
	    service mariadb start || echo 'Could not start MariaDB: the MySQL tests are skipped (and fail under CI=true).'; \
	fi

$(VENV_PYTHON):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml setup.py $(CONSTRAINTS) Makefile | $(VENV_PYTHON)
	$(VENV_PYTHON) -m pip install --upgrade pip
	$(VENV_PYTHON) -m pip install -c $(CONSTRAINTS) -e '.[$(EXTRAS)]'
	touch $(STAMP)

# -- zc.buildout: the same software, the classic way

$(BUILDOUT_VENV)/bin/buildout:
	$(PYTHON) -m venv $(BUILDOUT_VENV)
	$(BUILDOUT_VENV)/bin/pip install zc.buildout

buildout: apt-packages check-python $(BUILDOUT_VENV)/bin/buildout
	mkdir -p $(BUILDOUT_HOME)/downloads
	$(BUILDOUT_VENV)/bin/buildout -c buildout.cfg

clean:
	rm -rf $(VENV) $(BUILDOUT_HOME) bin parts develop-eggs .installed.cfg \
	    .coverage test-artifacts
