# Two commands do everything on a fresh machine: `make lab` and `make test`.
# Both create the virtualenv in .venv (if missing) and install the pinned packages.

PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# pytest-xdist workers for `make test`: most tests wait on kernels, nbgrader and browsers, so more
# workers than cores pay; tests sharing a costly fixture stay on one worker (tests/conftest.py).
TEST_WORKERS ?= 4
# Jupyter refuses to run as root unless told to (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
# nbgrader runs helper programs (alembic) by name: the venv's bin must come first on PATH.
export PATH := $(BIN):$(PATH)

.PHONY: install sandbox lab lab-zh instructor-lab data test test-fast release autograde lint clean-grading axe hub hub-students hub-clear-inbound hub-remove-accounts similarity-anchor benchmark-hub
# The student release to open: EDITION=zh opens the Chinese one (notebooks_zh/). Not LANG, which
# make reads from the environment (LANG=C.UTF-8 on most machines).
# The editions and their folders come from tfcourse/editions.toml (tfcourse/registry.py, standard library only).
EDITION ?= en
REGISTRY := $(PYTHON) -P tfcourse/registry.py
RELEASE_FOLDER = $(shell $(REGISTRY) release $(EDITION))
TRANSLATED_EDITIONS = $(shell $(REGISTRY) translated)

$(STAMP): requirements.txt requirements-lock.txt requirements-removed.txt classroom/requirements-hub-nodeps.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -c requirements-lock.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r classroom/requirements-hub-nodeps.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	$(BIN)/python -m pip uninstall --quiet --yes -r requirements-removed.txt
	touch $(STAMP)

# `make` alone lists the targets.
.DEFAULT_GOAL := help
.PHONY: help
help:  ## list every target with what it does
	@awk 'BEGIN { FS = ":.*## " } /^[A-Za-z][A-Za-z0-9_-]*:.*## / { printf "  %-18s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

install: $(STAMP)  ## create .venv and install everything (once; again when a requirements file changes)

lab: install  ## open the student notebooks in JupyterLab (EDITION=zh: the Chinese edition, notebooks_zh/)
	TFCOURSE_EDITION=$(EDITION) $(BIN)/jupyter lab $(ALLOW_ROOT) --ServerApp.root_dir=$(RELEASE_FOLDER)

lab-zh:  ## 打开中文版学生笔记本 (make lab EDITION=zh)
	$(MAKE) lab EDITION=zh

instructor-lab: install  ## JupyterLab on the whole repository, with the formgrader (Nbgrader menu)
	JUPYTER_CONFIG_PATH=$(abspath autograder/course/jupyter) $(BIN)/jupyter lab $(ALLOW_ROOT)

data: install  ## download the full AG News dataset into data/ag_news/ (resumable, checksums verified; EDITION=zh: in Chinese)
	TFCOURSE_EDITION=$(EDITION) $(BIN)/python -m tfcourse.download

sandbox:  ## bubblewrap, with which `grade` hides the course from student code (apt, when run as root)
	@command -v bwrap >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && apt-get install -y -qq bubblewrap; \
		else \
			echo "note: bubblewrap (bwrap) is missing: grading runs without its filesystem sandbox."; \
			echo "      Install it with your package manager (Debian/Ubuntu: sudo apt-get install bubblewrap)."; \
		fi; }

# Debian's chromium, which the browser test drives (Playwright's own browser download needs a
# network the course machines lack): installed with apt when run as root, like `sandbox` does.
INSTALL_CHROMIUM = command -v chromium >/dev/null 2>&1 || { \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && apt-get install -y -qq chromium; \
	else \
		echo "note: chromium is missing: the browser test skips (and fails in CI)."; \
		echo "      Install it with your package manager (Debian/Ubuntu: sudo apt-get install chromium)."; \
	fi; }
# A CJK font for the Chinese edition's pages in chromium: without one, the hub test's screenshots of a
# Chinese student's JupyterLab show empty boxes (its checks read the text and pass either way, so a
# failed install only says so).
INSTALL_CJK_FONT = fc-list :lang=zh 2>/dev/null | grep -q . || { \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		{ apt-get update -qq && apt-get install -y -qq fonts-wqy-microhei; } || echo "note: fonts-wqy-microhei not installed"; \
	else \
		echo "note: no CJK font: Chinese text in the browser test's screenshots shows as boxes."; \
		echo "      Install one with your package manager (Debian/Ubuntu: sudo apt-get install fonts-wqy-microhei)."; \
	fi; }

# axe-core, which the book's test injects into the reader edition's pages (package.json pins it).
AXE := node_modules/axe-core/axe.min.js
$(AXE): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then npm ci --no-audit --no-fund --loglevel=error && touch $(AXE); \
	else echo "note: npm is missing: the accessibility test skips (and fails in CI). Install Node.js and npm."; fi

axe: $(AXE)  ## install axe-core from npm (npm ci, the version package-lock.json pins)

# Dolos, the detector the similarity report is compared with: its own package.json, so that the npm ci
# of every `make test` stays small. Its tree-sitter parsers are built here (node-gyp, with this
# machine's Node headers in /usr: no header download).
DOLOS := benchmarks/dolos/node_modules/@dodona/dolos-lib/package.json
$(DOLOS): benchmarks/dolos/package.json benchmarks/dolos/package-lock.json
	cd benchmarks/dolos && npm ci --no-audit --no-fund --loglevel=error \
		&& npm_config_nodedir=/usr npm rebuild tree-sitter tree-sitter-compat @dodona/dolos-parsers
	touch $(DOLOS)

similarity-anchor: install $(DOLOS)  ## Dolos beside the similarity report on the generated classes (docs/similarity.md)
	$(BIN)/python -m benchmarks.similarity_anchor

benchmark-hub: install  ## the hub's capacity ramp (root, minutes): N simulated students up to p95 cell latency 2 s; build/hub-capacity (HUB_CAPACITY_ARGS)
	$(BIN)/python -m benchmarks.hub_capacity $(HUB_CAPACITY_ARGS)

test: install sandbox $(AXE)  ## the whole test suite (what CI runs), on TEST_WORKERS parallel workers
	@$(INSTALL_CHROMIUM)
	@$(INSTALL_CJK_FONT)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

test-fast: install  ## the edit-test loop (under 2 minutes): lint, unit tests, notebooks and variants in-process
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not slow" $(PYTEST_ARGS)

browser-test: install  ## the student flow in JupyterLab driven by headless chromium; screenshots in build/browser-artifacts
	@$(INSTALL_CHROMIUM)
	@$(INSTALL_CJK_FONT)
	$(BIN)/python -m pytest tests/browser $(PYTEST_ARGS)

book: install  ## the reader edition, English in build/book and Chinese in build/book/zh: solutions executed in full mode (BOOK_ARGS=--fast: fast mode)
	$(BIN)/python book/build.py $(BOOK_ARGS)

.PHONY: docs
docs: install  ## README.md and docs/ as a static site for reading offline: build/docs/index.html
	$(BIN)/python book/docs.py

# The oldest PyTorch the course supports (docs/students.md, "What the course needs"); TORCH_INDEX: where pip finds it.
TORCH ?= 2.3.1
TORCH_INDEX ?=
.PHONY: compat
compat: install  ## every notebook's visible tests in a bare venv holding PyTorch TORCH (2.3.1), as a hosted service runs them; build/compat
	$(BIN)/python -m benchmarks.compat --torch $(TORCH) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))

.PHONY: syllabus
syllabus: install  ## rewrite the points, hours, written questions and schedule of docs/syllabus.md and docs/syllabus.zh.md from solutions/
	$(BIN)/python book/syllabus.py

release: install  ## the setup cell and links at pyproject's version into solutions/ and README.md, notebooks/ from solutions/ with nbgrader, then each translated edition's (notebooks_zh/ from editions/zh/)
	$(BIN)/python -m editions.hosted
	for source in solutions/*/; do \
		$(BIN)/nbgrader generate_assignment "$$(basename $$source)" --force || exit 1; \
	done
	for edition in $(TRANSLATED_EDITIONS); do $(BIN)/python -m editions release $$edition || exit 1; done

.PHONY: scaffold
scaffold: install  ## a new notebook's files in every place the course needs them: make scaffold NOTEBOOK=08_name TITLE="Title"
	$(BIN)/python -m book.scaffold "$(NOTEBOOK)" "$(TITLE)"

.PHONY: student-kit
student-kit: install  ## the zip to give a class: build/student-kit/transformers-from-scratch-student-kit-<version>.zip (notebooks, helper package, data sample; no solution, no hidden test)
	$(BIN)/python -m classroom.student_kit

autograde: install sandbox  ## grade every submission under grading/submitted (JOBS=2), then export grades to grading/grades.csv
	$(BIN)/python -m autograder grade --jobs $${JOBS:-2}
	$(BIN)/python -m autograder export

# The classroom hub (classroom/, docs/running-a-class.md): one machine, run as root.
HUB_PREFIX ?= /srv/tfcourse
HUB_INSTRUCTOR ?= $(SUDO_USER)
# nbgrader's exchange: filesystem (this machine's disk) or ngshare (a service the hub runs; past one machine)
EXCHANGE ?= filesystem
# What the hub needs from Debian: Node.js's npm (the proxy) and a Python every user may run (with venv).
HUB_SYSTEM_PACKAGES = command -v npm >/dev/null 2>&1 && /usr/bin/python3 -c 'import ensurepip' 2>/dev/null || { \
	if command -v apt-get >/dev/null 2>&1; then apt-get update -qq && apt-get install -y -qq nodejs npm python3-venv; \
	else echo "install Node.js (npm) and Python 3.11's venv module with your package manager"; exit 1; fi; }

hub:  ## a JupyterHub for a class on this machine (root): lays out HUB_PREFIX, then runs the hub (EXCHANGE=ngshare: the ngshare service; MEM_LIMIT=2G CPU_LIMIT=1 TASKS_LIMIT=512 DISK_LIMIT=0 a student, NGSHARE_MEM_LIMIT=1G, CULL_IDLE=3600 KERNEL_CULL_IDLE=1800 DUE_DATES_EVERY=30 s)
	@test "$$(id -u)" = 0 || { echo "make hub needs root: it makes system users and runs each server as its user"; exit 1; }
	@$(HUB_SYSTEM_PACKAGES)
	$(PYTHON) -m classroom.provision --prefix $(HUB_PREFIX) --exchange $(EXCHANGE) $(if $(HUB_INSTRUCTOR),--instructor $(HUB_INSTRUCTOR))
	TFCOURSE_HUB_PREFIX=$(HUB_PREFIX) $(foreach v,MEM_LIMIT CPU_LIMIT TASKS_LIMIT NGSHARE_MEM_LIMIT DISK_LIMIT CULL_IDLE KERNEL_CULL_IDLE DUE_DATES_EVERY,$(if $($(v)),TFCOURSE_HUB_$(v)=$($(v)))) \
		$(HUB_PREFIX)/env/bin/jupyterhub -f classroom/jupyterhub_config.py

hub-students:  ## system users for the students of ROSTER=roster.csv (a 'student' column); PASSWORDS=1 for PAM logins
	$(PYTHON) -m classroom.roster $(ROSTER) --prefix $(HUB_PREFIX) $(if $(PASSWORDS),--passwords)

hub-clear-inbound:  ## remove (root) what an account left in the exchange's inbound under another's name (STUDENT=id: named for or made by that student only)
	$(PYTHON) -m classroom.clear_inbound --prefix $(HUB_PREFIX) $(if $(STUDENT),--student $(STUDENT))

hub-remove-accounts:  ## at a class's end (hub stopped): remove the system users that make hub and hub-students made, no other; HOMES=1 their homes too
	$(PYTHON) -m classroom.provision --prefix $(HUB_PREFIX) --remove-accounts $(if $(HOMES),--remove-homes)

lint: install  ## ruff on the Python code, as the suite checks it (tests/test_project.py)
	$(BIN)/python -m ruff check --no-cache .

.PHONY: gradescope
gradescope: install  ## Gradescope autograder zips in build/gradescope, one per notebook (NOTEBOOK=01_attention: that one); for instructors only, they hold the hidden tests
	for notebook in $(or $(NOTEBOOK),$(notdir $(patsubst %/,%,$(wildcard solutions/*/)))); do \
		$(BIN)/python -m autograder gradescope "$$notebook" || exit 1; \
	done

clean-grading:  ## forget every submission, grade and feedback (the git-ignored grading/ folder)
	rm -rf grading
