"""The web system (Art. 15 §§4, 7): server-rendered pages, small JavaScript modules, Leaflet served by the app."""
