"""The municipality's roads from OpenStreetMap: import, the road graph, map matching, names and pavement.

model.py is the interface the other modules share: a road way as imported (OSM way with its nodes), the summary
of an imported network, and what matching a stretch of fixes gives. See docs/roads.md.
"""
