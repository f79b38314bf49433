package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.storm.blobstore.LocalFsBlobStoreFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalRunnerTest {
    /** Storm's own blob file, asked to write where its directory cannot be made (/proc), fails as in the race. */
    private static IOException blobFileWithoutDirectory() {
        File keyDir = new File(new File("/proc/streamplace-no-such-dir"), "topo-stormcode.ser");
        return assertThrows(IOException.class, () -> new LocalFsBlobStoreFile(keyDir, true, true).getOutputStream());
    }

    @Test
    void theBlobStoreRaceIsRecognisedThroughNimbusWrapping() {
        IOException cause = blobFileWithoutDirectory();
        assertTrue(LocalRunner.isBlobStoreRace(new RuntimeException(new RuntimeException(cause))));
    }

    @Test
    void otherFailuresAreNotRetried(@TempDir Path tmp) {
        IOException elsewhere = assertThrows(IOException.class,
            () -> new FileOutputStream(tmp.resolve("missing/file").toFile()).close());   // "(No such file or directory)"
        assertFalse(LocalRunner.isBlobStoreRace(new RuntimeException(elsewhere)));
        assertFalse(LocalRunner.isBlobStoreRace(new RuntimeException("No such file or directory")));
        assertFalse(LocalRunner.isBlobStoreRace(new IllegalStateException()));
    }
}
