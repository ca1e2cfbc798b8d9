"""Pure domain of swarmmem: records, ids, validation, scoring policy and the recall pipeline.

Nothing here touches a database, a model or the network; adapters do (see ``swarmmem.ports``).
"""
