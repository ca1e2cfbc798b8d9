"""Agent hosts as adapters at the edge: ``swarmmem hook <host> <event>`` and ``init --agent``.

- :mod:`~swarmmem.hooks.hosts`: each host's stdin fields and stdout shapes (standard library);
- :mod:`~swarmmem.hooks.client`: the narrow entry point every hook call goes through;
- :mod:`~swarmmem.hooks.daemon`: the project's helper process that keeps the model loaded;
- :mod:`~swarmmem.hooks.runner`: the brief, the prompt recall and the proposals a hook files;
- :mod:`~swarmmem.hooks.transcript`: reading the agent's messages from a host's transcript;
- :mod:`~swarmmem.hooks.install`: the host configuration ``swarmmem init --agent`` writes.

Nothing is imported here: the hook entry point must stay cheap.
"""
