package dev.fencing;

/**
 * Misconfiguration found while preparing a fenced method or the fencing infrastructure (blank resource, a key
 * that does not parse, a method proxies cannot advise, a missing issuer). Thrown at startup where a container
 * exists; the message names the method and what to change.
 */
public class FencingConfigurationException extends FencingException {

    private static final long serialVersionUID = 1L;

    public FencingConfigurationException(String message) {
        super(message);
    }

    public FencingConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
