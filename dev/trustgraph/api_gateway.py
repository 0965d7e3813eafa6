"""
TrustGraph's `api-gateway` command, unchanged but for one start-up wait.

At start the gateway asks IAM for its JWT signing key and retries 30 times, 2 s apart, while the answer is
empty (trustgraph-flow 2.11.1, gateway/auth.py IamAuth.start). TrustGraph's no-auth IAM regime (`no-auth-svc`)
has no signing key and always answers empty, so every no-auth gateway first waits about a minute and then
goes on ("JWT validation will retry on first request"); anonymous requests never need the key. This wrapper
makes that one try instead of thirty, then runs the gateway's own entry point with the same arguments.
"""

import trustgraph.gateway.auth as auth

_start = auth.IamAuth.start


async def _start_once(self, max_retries=1, retry_delay=0.0):
    return await _start(self, max_retries=max_retries, retry_delay=retry_delay)


auth.IamAuth.start = _start_once

if __name__ == "__main__":
    import sys
    from trustgraph.gateway.service import run

    sys.argv[0] = "api-gateway"
    run()
