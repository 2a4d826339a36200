# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One OpenStack API as a WSGI application for gunicorn, in the test cloud.

Several services parse ``sys.argv`` with oslo.config when their application is
built; under gunicorn that is gunicorn's command line, which they reject. This
module gives them the command line they expect (``HOTPLAY_WSGI_ARGV``, one
argument per line) and imports the application named by ``HOTPLAY_WSGI_APP``
(``module:attribute``).  Each request's start (epoch seconds) is put in its
environ as ``HOTPLAY_BEGAN``, for the access log (gunicorn's own time there is
the end, to the second)."""

import importlib
import os
import sys
import time

sys.argv = os.environ["HOTPLAY_WSGI_ARGV"].splitlines()
_MODULE, _ATTRIBUTE = os.environ["HOTPLAY_WSGI_APP"].split(":")
_APPLICATION = getattr(importlib.import_module(_MODULE), _ATTRIBUTE)


def application(environ, start_response):  # type: ignore[no-untyped-def]
    environ["HOTPLAY_BEGAN"] = f"{time.time():.3f}"
    return _APPLICATION(environ, start_response)
