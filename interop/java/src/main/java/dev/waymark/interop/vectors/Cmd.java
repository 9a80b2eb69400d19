package dev.waymark.interop.vectors;

import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/** Small fluent wrapper over a {@link RemotingCommand}, so request catalogues read as tables. */
public final class Cmd {
    public final RemotingCommand command;

    public Cmd(RemotingCommand command) {
        this.command = command;
    }

    public Cmd body(byte[] body) {
        command.setBody(body);
        return this;
    }

    public Cmd version(int version) {
        command.setVersion(version);
        return this;
    }

    public Cmd oneway() {
        command.markOnewayRPC();
        return this;
    }

    public Cmd language(LanguageCode language) {
        command.setLanguage(language);
        return this;
    }

    public Cmd ext(String key, String value) {
        command.addExtField(key, value);
        return this;
    }
}
