"""Where the daemon lives on the bus: names shared by the daemon, its clients and the frontends."""

BUS_NAME = "org.tsuzuri.Tsuzuri1"
ROOT_PATH = "/org/tsuzuri/Tsuzuri1"
ROOT_INTERFACE = BUS_NAME
SESSION_PATH_PREFIX = ROOT_PATH + "/session/"
SESSION_INTERFACE = BUS_NAME + ".Session"

ERROR_PROTOCOL = BUS_NAME + ".Error.Protocol"  # a malformed or invalid ime_protocol message
ERROR_UNKNOWN_SESSION = BUS_NAME + ".Error.UnknownSession"  # closed, or reaped with its client
