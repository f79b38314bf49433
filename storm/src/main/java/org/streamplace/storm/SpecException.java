package org.streamplace.storm;

/** A problem with a user's file, reported as one line: {@code FILE: FIELD: problem}. */
public class SpecException extends Exception {
    private static final long serialVersionUID = 1L;

    public SpecException(String file, String field, String problem) {
        super(file + ": " + (field.isEmpty() ? "" : field + ": ") + problem);
    }
}
