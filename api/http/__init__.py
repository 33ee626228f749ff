"""Routes other than GraphQL: POST guard, JSON in and out, ingest, QR, passport, explorer."""
