<?php $dbpasswd = "x"; ?>
