"""D-Bus interfaces as data: each method's name, typed arguments and the coroutine that answers it.

The server dispatches from these tables (checking a call's signature against the method's arguments and
replying with its out-arguments' signature), and its introspection XML is written from the same tables, so
what the daemon says it offers and what it answers cannot drift apart. Nothing here touches a bus.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Awaitable, Callable
from xml.sax.saxutils import quoteattr

# A method's handler: (service, the call's message, *its in-arguments) → the list of its out-arguments.
Handler = Callable[..., Awaitable[list[Any]]]


@dataclass(frozen=True)
class Arg:
    name: str
    signature: str  # one complete D-Bus type


def signature_of(args: tuple[Arg, ...]) -> str:
    """The D-Bus signature of arguments in turn."""
    return "".join(arg.signature for arg in args)


@dataclass(frozen=True)
class Method:
    name: str
    handler: Handler | None  # None: answered by the dispatcher itself (Introspect)
    inputs: tuple[Arg, ...] = ()
    outputs: tuple[Arg, ...] = ()

    @property
    def in_signature(self) -> str:
        return signature_of(self.inputs)

    @property
    def out_signature(self) -> str:
        return signature_of(self.outputs)


@dataclass(frozen=True)
class Signal:
    name: str
    args: tuple[Arg, ...] = ()

    @property
    def signature(self) -> str:
        return signature_of(self.args)


@dataclass(frozen=True)
class Property:
    name: str
    signature: str  # read-only: the daemon has no writable properties


@dataclass(frozen=True)
class Interface:
    name: str
    methods: tuple[Method, ...]
    signals: tuple[Signal, ...] = ()
    properties: tuple[Property, ...] = ()

    def method(self, name: str) -> Method | None:
        return next((method for method in self.methods if method.name == name), None)

    def signal(self, name: str) -> Signal:
        return next(signal for signal in self.signals if signal.name == name)


def introspection_xml(interfaces: tuple[Interface, ...]) -> str:
    """The Introspect answer for an object offering `interfaces`."""
    lines = [
        '<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"',
        ' "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">',
        "<node>",
    ]
    for interface in interfaces:
        lines.append(f" <interface name={quoteattr(interface.name)}>")
        for method in interface.methods:
            args = [_arg(arg, "in") for arg in method.inputs] + [_arg(arg, "out") for arg in method.outputs]
            lines.append(f"  <method name={quoteattr(method.name)}>{''.join(args)}</method>")
        for prop in interface.properties:
            lines.append(f'  <property name={quoteattr(prop.name)} type={quoteattr(prop.signature)} access="read"/>')
        for signal in interface.signals:
            signal_args = "".join(
                f"<arg name={quoteattr(arg.name)} type={quoteattr(arg.signature)}/>" for arg in signal.args
            )
            lines.append(f"  <signal name={quoteattr(signal.name)}>{signal_args}</signal>")
        lines.append(" </interface>")
    lines.append("</node>")
    return "\n".join(lines) + "\n"


def _arg(arg: Arg, direction: str) -> str:
    return f'<arg name={quoteattr(arg.name)} type={quoteattr(arg.signature)} direction="{direction}"/>'
