"""Tests of the classroom deployments (classroom/): what runs without a hub or a cluster."""
