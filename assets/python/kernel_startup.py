# Run by every local-pool kernel at start (IPKernelApp.exec_files). It makes the
# value of a cell's last expression available with its JSON type, as the service's
# `result` / `executionResult` carries it (aca-api.md §3.1, §4.2): 6*7 -> 42,
# 'a' -> "a", 2.5 -> 2.5, float('nan') -> "nan", [1, 2] -> [1, 2].


def _sessionpad_install_value_formatter():
    import json
    import math
    import numbers

    from IPython import get_ipython
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    mime = "application/vnd.sessionpad.value+json"

    class ValueFormatter(BaseFormatter):
        format_type = Unicode(mime)
        print_method = ObjectName("_repr_sessionpad_value_")
        _return_type = (dict, list, int, float, str, bool, type(None))

    def to_json(value):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            v = float(value)
            if math.isnan(v):
                return "nan"
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
            return v
        if isinstance(value, (list, tuple, dict)):
            try:
                return json.loads(json.dumps(value, allow_nan=False))
            except (TypeError, ValueError):
                return None
        return None

    ip = get_ipython()
    if ip is None:
        return
    formatter = ValueFormatter(parent=ip.display_formatter)
    formatter.for_type(object, to_json)
    ip.display_formatter.formatters[mime] = formatter


_sessionpad_install_value_formatter()
del _sessionpad_install_value_formatter
