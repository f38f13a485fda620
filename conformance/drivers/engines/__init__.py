"""Write-only drivers for real distributed engines that commit to Lance.

Each module here is a driver (``docs/drivers.md``) whose ``write`` performs
operations of the write vocabulary (:mod:`conformance.drivers.writes`)
through one engine's own high-level API, so that the concurrency harness and
writer conformance judge what the engine commits:

* :mod:`.pylance_distributed`: pylance's own distributed pattern in worker
  processes of this machine (fragments written by workers, one commit on the
  coordinator; distributed compaction and delete);
* :mod:`.lance_ray`: lance-ray on a Ray started on 127.0.0.1;
* :mod:`.daft`: Daft with daft-lance, on Daft's native runner.

They read nothing themselves (readers are the reference and pylance): they
declare only the ``write`` capability and have no read member, which the
driver protocol asks only of drivers declaring a read capability. Engine packages are
imported inside the functions, so every module imports without them; the
optional extra ``engines`` installs them (``pip install
lance-conformance[engines]``). ``docs/engines/`` has a page per engine.
"""
