_spans, _events = [], []


def register_event_time_span_listener(cb):
    _spans.append(cb)


def register_event_listener(cb):
    _events.append(cb)


def register_event_duration_secs_listener(cb):
    pass
