package dev.fencing.redisson;

/**
 * Resource names to Redis key names, in one place. The lock key is {@code prefix + resource} with {@code %},
 * <code>{</code> and <code>}</code> percent-encoded: an injective mapping (no two resources share a key), and no
 * brace ever reaches Redis, so the lock key and Redisson's token key <code>redisson_lock_token:{lockKey}</code> always
 * hash to one Redis Cluster slot (a brace in the name would make Redis hash a different part of each).
 */
final class RedisKeys {

    /** The prefix Redisson gives the token key of an {@code RFencedLock} (RedissonFencedLock, 3.52). */
    static final String TOKEN_PREFIX = "redisson_lock_token";

    private RedisKeys() {
    }

    /** The lock key of {@code resource} under {@code prefix}. */
    static String lockKey(String prefix, String resource) {
        if (resource.indexOf('%') < 0 && resource.indexOf('{') < 0 && resource.indexOf('}') < 0) {
            return prefix + resource;
        }
        return prefix + resource.replace("%", "%25").replace("{", "%7B").replace("}", "%7D");
    }

    /**
     * The key of a family's token floor ({@link RedissonTokenIssuer#raiseFamilyFloor}): the family's lock key and an
     * invisible U+001F, which no resource has (a token refuses control characters), so no lock key is ever one.
     */
    static String familyFloorKey(String prefix, String family) {
        return lockKey(prefix, family) + '\u001f';
    }

    /**
     * The key of the issuer prefix's data marker ({@link RedissonTokenIssuer}): the prefix, an invisible U+001E and
     * {@code marker}. Never a lock key (no resource has a control character) nor a family floor key (those end in
     * U+001F), and never another prefix's marker (a prefix has no control character, so the U+001E ends it); no
     * brace, so not in the slot of a token key either.
     */
    static String markerKey(String prefix) {
        return prefix + '\u001e' + "marker";
    }

    /** A key as {@code redis-cli} shows it: the control characters this class puts in keys as {@code \xNN}. */
    static String shown(String key) {
        return key.replace("\u001e", "\\x1e").replace("\u001f", "\\x1f");
    }

    /**
     * The key Redisson keeps the lock's counter in: <code>redisson_lock_token:{lockKey}</code>. Never deleted by
     * Redisson (its issue 6510), and never by this library: deleting it restarts the counter.
     */
    static String tokenKey(String lockKey) {
        return TOKEN_PREFIX + ":{" + lockKey + "}";
    }

    /**
     * Checks a key prefix: not null, no braces (they would move keys between cluster slots), no control characters.
     *
     * @throws IllegalArgumentException naming the prefix and what is wrong with it
     */
    static String checkPrefix(String prefix) {
        if (prefix == null) {
            throw new IllegalArgumentException("RedissonTokenIssuer key prefix must not be null");
        }
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("RedissonTokenIssuer key prefix '" + prefix + "' must not contain '{' "
                    + "or '}': a hash tag would put a lock key and its token key in different Redis Cluster slots");
        }
        if (prefix.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("RedissonTokenIssuer key prefix '" + prefix.replaceAll("\\p{Cntrl}", "?")
                    + "' must not contain control characters");
        }
        if (prefix.length() > 200) {
            throw new IllegalArgumentException("RedissonTokenIssuer key prefix is " + prefix.length()
                    + " chars long; at most 200 are allowed");
        }
        return prefix;
    }
}
