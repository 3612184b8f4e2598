"""Docent web app: a tiny static server for the single-page app in `frontend/static/`."""
