"""Code for the test children that try what a student would, inside a layer: `ATTEMPT + their code`."""

ATTEMPT = '''
def attempt(action):
    """"allowed", or the name of the OSError the action met."""
    try:
        action()
        return "allowed"
    except OSError as error:
        return type(error).__name__
'''
