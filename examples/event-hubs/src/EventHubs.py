"""Sends events to an Azure Event Hub, or reads what is there, with the provider's own SDK.

algohost has no native Event Hubs connector (the specification says so): an algorithm with
network_access "full" reaches the hub itself. Such connections are not Event Flows and are not
listed as event listeners. The connection string is read from hosted data the owner keeps
private (pipeline_enabled lets the algorithm read it), never from the input.

Input:
  {"send": [<event>, ...]}                       each event JSON-encoded into one EventData
  {"read": {"max_events": 10, "seconds": 5}}     events from the start of every partition
Optional in both: "hub" (else the EntityPath of the connection string).
"""
import json
import time

import Algorithmia
from azure.eventhub import EventData, EventHubConsumerClient, EventHubProducerClient

# In a collection of the owner's that only the owner's algorithms read (the default ACL):
# {"connection_string": "Endpoint=sb://…;SharedAccessKeyName=…;SharedAccessKey=…", "hub": "…"}.
# Change "alice" to the algorithm's owner.
SETTINGS = "data://alice/eventhubs/settings.json"


def settings():
    f = Algorithmia.client().file(SETTINGS)
    if not f.exists():
        raise ValueError('put {"connection_string": …, "hub": …} in ' + SETTINGS)
    return json.loads(f.getString())


def apply(input):
    conf = settings()
    hub = input.get("hub") or conf.get("hub")
    if "send" in input:
        return send(conf["connection_string"], hub, input["send"])
    if "read" in input:
        opts = input["read"] or {}
        return read(conf["connection_string"], hub, int(opts.get("max_events", 10)), float(opts.get("seconds", 5)))
    raise ValueError('give {"send": [...]} or {"read": {...}}')


def send(connection_string, hub, events):
    producer = EventHubProducerClient.from_connection_string(connection_string, eventhub_name=hub)
    with producer:
        batch = producer.create_batch()
        for event in events:
            batch.add(EventData(json.dumps(event)))
        producer.send_batch(batch)
    return {"sent": len(events)}


def read(connection_string, hub, max_events, seconds):
    received = []
    deadline = time.time() + seconds
    consumer = EventHubConsumerClient.from_connection_string(connection_string, consumer_group="$Default", eventhub_name=hub)

    def on_event(partition_context, event):
        # Called with None every max_wait_time when nothing came, so the deadline is checked.
        if event is not None and len(received) < max_events:
            received.append({"partition": partition_context.partition_id, "offset": event.offset, "body": event.body_as_str()})
        if len(received) >= max_events or time.time() > deadline:
            # receive() blocks until the client closes.
            consumer.close()

    with consumer:
        consumer.receive(on_event=on_event, starting_position="-1", max_wait_time=1)
    return {"events": received}
