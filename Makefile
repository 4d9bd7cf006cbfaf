# Tsuzuri for every user of this machine:
#   make                  as yourself: creates .venv (scripts/bootstrap.sh) if missing, builds the fcitx5 addon
#   sudo make install     copies everything into place (scripts/system_install.py says where)
#   sudo make uninstall   removes what the install wrote, and nothing else
# Variables:
#   PREFIX              the daemon, its commands, the systemd user unit, the D-Bus activation file (/usr/local)
#   DESTDIR             stage every file below this folder (packaging)
#   FRONTENDS           "ibus fcitx5" (default), "ibus" (needs no compiler) or "fcitx5"
#   IBUS_COMPONENT_DIR  IBus's component folder (default /usr/share/ibus/component, the one IBus reads)
#   FCITX5_ADDON_DIR, FCITX5_DATA_DIR   fcitx5's folders (default: fcitx5's own, as its cmake files say)
PREFIX ?= /usr/local
FRONTENDS ?= ibus fcitx5
IBUS_COMPONENT_DIR ?= /usr/share/ibus/component
FCITX5_BUILD ?= build/fcitx5-system
PYTHON ?= .venv/bin/python

fcitx5_dirs = $(if $(FCITX5_ADDON_DIR),-DTSUZURI_LIBRARY_DIR="$(FCITX5_ADDON_DIR)" \
	-DTSUZURI_DATA_DIR="$(FCITX5_DATA_DIR)",-UTSUZURI_LIBRARY_DIR -UTSUZURI_DATA_DIR)

.PHONY: all fcitx5-addon install uninstall
all: $(PYTHON) $(if $(filter fcitx5,$(FRONTENDS)),fcitx5-addon)

$(PYTHON):
	scripts/bootstrap.sh

fcitx5-addon:
	cmake -S frontends/fcitx5 -B "$(FCITX5_BUILD)" -DCMAKE_BUILD_TYPE=Release $(fcitx5_dirs)
	cmake --build "$(FCITX5_BUILD)" -j2 --target tsuzuri

install: all
	$(PYTHON) scripts/system_install.py install --prefix "$(PREFIX)" --destdir "$(DESTDIR)" \
		--frontends $(FRONTENDS) --ibus-component-dir "$(IBUS_COMPONENT_DIR)" --fcitx5-build "$(FCITX5_BUILD)"

uninstall:
	python3 scripts/system_install.py uninstall --prefix "$(PREFIX)" --destdir "$(DESTDIR)"
