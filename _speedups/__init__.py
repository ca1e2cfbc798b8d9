"""Speed kernels: each comes as a compiled ``_<k>_c`` module, a pure twin ``_<k>_py`` and a
selector ``<k>`` that exports the functions and ``KERNEL_IMPL``.

``SWARMMEM_NO_EXTENSIONS=1`` forces the pure twins.
"""
