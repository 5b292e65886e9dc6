package dev.fencing.verify.network;

/** A namespace, veth, route or relay operation of the harness failed; the message names the command or address. */
public class NetworkException extends RuntimeException {

    public NetworkException(String message) {
        super(message);
    }

    public NetworkException(String message, Throwable cause) {
        super(message, cause);
    }
}
