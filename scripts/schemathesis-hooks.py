"""Hooks of scripts/schemathesis (loaded through SCHEMATHESIS_HOOKS).

The body of an attachment upload (PATCH /tables/{table}/{id}/content) is
application/offset+octet-stream: raw bytes, sent as schemathesis sends application/octet-stream.
"""
import schemathesis

schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")
