"""Indexes: tagging incoming records with the file group that currently holds their key."""
