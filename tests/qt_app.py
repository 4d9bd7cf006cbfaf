"""A real Qt application for the frontend tests: tests/gtk_app.py's window and events, in Qt 5 or Qt 6.

    /usr/bin/python3 tests/qt_app.py 5|6 [TITLE]

A QLineEdit above a QTextEdit (Debian's python3-pyqt5 or python3-pyqt6), the input method chosen by
QT_IM_MODULE. Prints the same JSON lines as tests/gtk_app.py: the preedit is what the last input
method event to a widget showed.
"""

import importlib
import json
import sys

QT_VERSION = sys.argv[1] if len(sys.argv) > 1 else "5"
TITLE = sys.argv[2] if len(sys.argv) > 2 else "tsuzuri test"
QtCore = importlib.import_module(f"PyQt{QT_VERSION}.QtCore")
QtWidgets = importlib.import_module(f"PyQt{QT_VERSION}.QtWidgets")


def say(**event) -> None:
    print(json.dumps(event, ensure_ascii=False), flush=True)


def reporting(base: type, name: str) -> type:
    """`base` that reports its preedit and its focus under `name`."""

    class Reporting(base):
        def inputMethodEvent(self, event) -> None:
            super().inputMethodEvent(event)
            say(**{f"{name}_preedit": event.preeditString()})

        def focusInEvent(self, event) -> None:
            super().focusInEvent(event)
            say(focus=name)

    return Reporting


def screen_rectangle(widget) -> list[int]:
    origin = widget.mapToGlobal(QtCore.QPoint(0, 0))
    return [origin.x(), origin.y(), widget.width(), widget.height()]


def main() -> int:
    app = QtWidgets.QApplication([sys.argv[0]])
    window = QtWidgets.QWidget()
    window.setWindowTitle(TITLE)
    window.resize(480, 240)
    layout = QtWidgets.QVBoxLayout(window)
    entry = reporting(QtWidgets.QLineEdit, "entry")()
    text_view = reporting(QtWidgets.QTextEdit, "textview")()
    text_view.setAcceptRichText(False)
    layout.addWidget(entry)
    layout.addWidget(text_view)
    entry.textChanged.connect(lambda text: say(entry=text))
    text_view.textChanged.connect(lambda: say(textview=text_view.toPlainText()))

    def announce() -> None:
        if not window.isVisible() or entry.width() == 0:
            QtCore.QTimer.singleShot(20, announce)
            return
        say(ready={"entry": screen_rectangle(entry), "textview": screen_rectangle(text_view)})

    window.show()
    entry.setFocus()
    QtCore.QTimer.singleShot(20, announce)
    return app.exec() if QT_VERSION == "6" else app.exec_()


if __name__ == "__main__":
    sys.exit(main())
