"""Care of a memory: the index, git hooks, the graph page and health checks (doctor).

The modules that do the work still live where they grew (``rhythms/maintenance.py``,
``hooks.py``, ``doctor.py``, ``visualise.py``); this package holds their half of the API.
"""
