"""The results site: static pages, and the data they show, built from a results folder."""
