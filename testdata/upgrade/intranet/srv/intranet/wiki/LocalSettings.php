<?php $wgDBpassword = "x"; ?>
