"""The D-Bus method tables: the introspection XML is written from the same tables the daemon dispatches from."""

import inspect

from dbus_fast.introspection import Node

from daemon.dbus_interface import Arg, Interface, Method, Signal, introspection_xml
import pytest

from daemon import userdata_methods
from daemon.server import INTROSPECTABLE, ROOT, ROOT_INTROSPECTION, SESSION, SESSION_INTROSPECTION, TsuzuriService


@pytest.mark.parametrize(
    "xml, tables", [(ROOT_INTROSPECTION, (ROOT, INTROSPECTABLE)), (SESSION_INTROSPECTION, (SESSION, INTROSPECTABLE))]
)
def test_each_objects_xml_describes_every_method_signal_and_property_of_its_tables(xml, tables):
    node = Node.parse(xml)
    described = {interface.name: interface for interface in node.interfaces}
    assert set(described) == {table.name for table in tables}
    for table in tables:
        interface = described[table.name]
        assert [m.name for m in interface.methods] == [m.name for m in table.methods]
        for method, parsed in zip(table.methods, interface.methods):
            assert [(a.name, a.signature) for a in parsed.in_args] == [(a.name, a.signature) for a in method.inputs]
            assert [(a.name, a.signature) for a in parsed.out_args] == [(a.name, a.signature) for a in method.outputs]
        assert [(s.name, s.signature) for s in interface.signals] == [(s.name, s.signature) for s in table.signals]
        assert [(p.name, p.signature) for p in interface.properties] == [
            (p.name, p.signature) for p in table.properties
        ]


def test_every_handler_is_a_coroutine_taking_the_service_the_call_and_the_methods_arguments():
    for table in (ROOT, SESSION):
        for method in table.methods:
            assert inspect.iscoroutinefunction(method.handler), method.name
            parameters = list(inspect.signature(method.handler).parameters)
            assert parameters[1] == "msg" and len(parameters) - 2 == len(method.inputs), method.name
            # a method of the service, or a user-data method of its own module, given the service as `host`
            owner = {"self": TsuzuriService, "host": userdata_methods}[parameters[0]]
            assert getattr(owner, method.handler.__name__) is method.handler


def test_names_and_signatures_are_quoted_into_the_xml():
    async def answer(service, msg, text):
        return [text]

    table = Interface(
        "org.example.Odd",
        (Method("Echo", answer, (Arg("text", "s"),), (Arg("same", "s"),)),),
        signals=(Signal("Said", (Arg("what", "a{sv}"),)),),
    )
    node = Node.parse(introspection_xml((table,)))
    (interface,) = node.interfaces
    assert interface.methods[0].in_signature == "s" and interface.methods[0].out_signature == "s"
    assert interface.signals[0].signature == "a{sv}"
    assert table.method("Echo").in_signature == "s" and table.method("Nope") is None
